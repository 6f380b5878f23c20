"""Offline speech features of a clip (ASR, DNSMOS, speaker, VAD, prosody, text context).

Each extractor is a module with a typed function over a 16 kHz :class:`speech_drame.audio.Audio`;
:mod:`speech_drame.features.blueprint` combines them, with caching, into one record per clip.
Heavy libraries are imported on first use.
"""
