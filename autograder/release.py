"""`python -m autograder.release`: reescreve solutions/ e gera exercises/ (o código está em authoring/release.py)."""

from .authoring.release import main

if __name__ == "__main__":
    raise SystemExit(main())
