"""AnimeScore-style pairwise preference ranking of voices.

- :mod:`.pairs`: the release's pair CSVs (column aliases, majority vote, clear errors) and a
  synthetic demo pair set built from the demo corpus's construction labels.
- :mod:`.encoders`: frozen frame encoders (Whisper tiny.en offline default, any transformers SSL
  model by name) with frame features cached on disk.
- :mod:`.ranker`: BiLSTM -> mean pooling -> MLP -> scalar score, trained with the pairwise
  logistic loss; safetensors + config; batch ``score(paths)``.
- :mod:`.baseline`: handcrafted acoustic features with logistic regression on feature
  differences, 5-fold cross-validation.
"""
