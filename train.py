#!/usr/bin/env python
"""Fine-tune a DRAME-Eval evaluator (LoRA on Qwen2-Audio) with Trainer + PEFT.

    python train.py --config configs/drame_eval_realism.yaml
    accelerate launch --config_file configs/accelerate_deepspeed_zero1.yaml \\
        train.py --config configs/drame_eval_realism.yaml
    python train.py --config configs/drame_eval_archetype.yaml --tiny --max_steps 20 \\
        --gradient_accumulation_steps 1 --max_eval_samples 16 --output_dir /tmp/drame-eval-smoke          # offline smoke run on a tiny random model

Checkpoints go to --output_dir, the exported evaluator to <output_dir>/evaluator (what
--push_to_hub uploads). All logic lives in speech_drame/training/; `python train.py --help`
lists the options.
"""

import sys

from speech_drame.training.run import main

if __name__ == "__main__":
    sys.exit(main())
