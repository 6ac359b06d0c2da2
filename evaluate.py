"""Audit a trained checkpoint: ``python evaluate.py ckpt_path=<file> split=test``."""

from sedcontract.evaluation import main

if __name__ == "__main__":
    main()
