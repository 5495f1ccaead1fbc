"""Support for loading and running a checkpoint: ``loader`` (safetensors → model), ``tokenizer`` (text ↔ ids,
chat template), ``dtypes`` (dtype names, probed) and ``hugepages`` (tensors on transparent huge pages)."""
