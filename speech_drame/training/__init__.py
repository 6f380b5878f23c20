"""DRAME-Eval fine-tuning: LoRA on an audio-LLM with Trainer + PEFT (``train.py`` calls this)."""
