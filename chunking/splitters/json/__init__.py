"""JSON splitters: the byte-exact span splitter the pipeline uses (``spans``) and LangChain's
``RecursiveJsonSplitter`` (``recursive``).
"""
