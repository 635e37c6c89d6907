"""``python -m checkeval_core`` runs the same CLI as the ``checkeval`` console script."""

from checkeval_core.cli import main

if __name__ == "__main__":
    main()
