"""The Speech-DRAME Space: Hugging Face Spaces runs this file (``app_file`` in README.md).

The page is ``speech_drame.space_app``. It scores with ``$SPEECH_DRAME_SCORER``, else the spec
``speech-drame space bundle`` wrote in ``scorer.txt`` beside this file, else ``lite`` (from a
checkout: the LiteScorer ``make demo`` trains); it offers the clips in ``examples/``.
From a checkout: ``python space/app.py``.
"""

import os
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from speech_drame.space_app import MAX_UPLOAD_MB, PAGE_CSS, build_app, folder_scorer  # noqa: E402

HERE = Path(__file__).resolve().parent
demo = build_app(
    folder_scorer(HERE),
    examples_from=str(HERE / "examples"),
    examples_label="Examples (official Speech-DRAME samples, Apache-2.0)",
)

if __name__ == "__main__":
    demo.launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        max_file_size=f"{MAX_UPLOAD_MB}mb",
        css=PAGE_CSS,
    )
