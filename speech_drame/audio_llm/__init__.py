"""Audio-LLM plumbing shared by DRAME-Eval training and scoring (Qwen2-Audio)."""
