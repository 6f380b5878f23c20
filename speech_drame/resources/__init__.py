"""Data files shipped with the package, read with ``importlib.resources``.

``prompt_profile.json``: the default DRAME-Eval prompt profile, this package's query wording
(:mod:`speech_drame.prompt_profile`); its paraphrases are in ``instruction_pool.json``:
paraphrases of each dimension's question, drawn per training example when DRAME-Eval is trained
with prompt variation (see :func:`speech_drame.prompts.instruction_pool`).

``paper_tables.json``: the Speech-DRAME paper's evaluator tables (2, 3 and 4), shown beside
reproduced ones by ``speech-drame table --paper`` (:func:`speech_drame.paper_tables.paper_rows`).

``voice_encoder.safetensors``: the GE2E voice encoder weights of resemblyzer 0.1.4, converted
unchanged (:mod:`speech_drame.features.speaker`; licence in ``voice_encoder.LICENSE.md``).
"""
