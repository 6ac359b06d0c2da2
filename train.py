"""Train a detector on the contract grid: ``python train.py model=dilated_cnn`` (configs in
``configs/``, i.e. ``src/sedcontract/configs``)."""

from sedcontract.training import main

if __name__ == "__main__":
    main()
