"""Engines that fit and predict with the estimators over data held elsewhere: files streamed block by block, Dask collections."""
