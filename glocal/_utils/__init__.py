"""Helpers every room of glocal may import: input checks and the one conversion of label
encodings (`validation`), files in and out (`io`), progress bars and the words of progress
lines (`progress`), and factorizations and conjugate gradients (`linalg`). This package
imports nothing else of glocal but `glocal.labels`."""
