"""HTML splitters: by header sections (``header``), by section elements (``section``) and the structure-keeping
semantic splitter (``semantic``), over one DOM reader (``_dom``) and renderer (``_render``).
"""
