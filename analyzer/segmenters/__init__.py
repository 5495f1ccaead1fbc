"""The segmenters: one module per provider body shape, each a body → its segments.

:mod:`.canonical` is a segment and its canonical bytes; :mod:`.anthropic_segmenter`,
:mod:`.openai_segmenter` and :mod:`.gemini_segmenter` cut their provider's bodies. Callers use
:mod:`analyzer.segments`, which picks the segmenter for a route. See docs/request-path.md.
"""
