"""Speech-DRAME Space: a thin caller of :mod:`speech_drame.space_app` (all logic lives there).

Run locally with ``speech-drame serve`` or ``python space/app.py``; on Hugging Face Spaces this
file is the ``app_file``. Set ``SPEECH_DRAME_SCORER`` to a scorer spec to choose the scorer
(``lite:FOLDER``, ``drame-eval:ORG/NAME``, ``judge:MODEL@URL``; default: the LiteScorer in
``$SPEECH_DRAME_LITE_SCORER`` or ``artifacts/lite_scorer``). The limits and the
privacy settings (no feature cache for uploads, Gradio's ``delete_cache``, a bounded queue) are
set by ``build_app``.
"""

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from speech_drame.space_app import build_app, default_release  # noqa: E402

demo = build_app(examples_from=default_release())

if __name__ == "__main__":
    from speech_drame.space_app import MAX_UPLOAD_MB

    demo.launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
                max_file_size=f"{MAX_UPLOAD_MB}mb")  # fmt: skip
