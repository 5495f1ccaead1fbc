"""The models: ``llama`` (the Llama-family decoder stack; Mistral and Qwen2 load into it too). It imports
nothing of ``engine`` or ``server``."""
