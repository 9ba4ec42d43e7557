"""Um corretor por workspace (plan/lock.py), sem kernel: o segundo é recusado com o número do
processo que tem a trava.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def test_a_second_grader_on_the_same_workspace_is_refused(tmp_path):
    from autograder.plan import lock
    with lock.hold(tmp_path):
        with pytest.raises(lock.WorkspaceBusy, match="outro corretor .* já está corrigindo"):
            with lock.hold(tmp_path):
                pass
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
        p = subprocess.run([sys.executable, "-m", "autograder", "grade", str(tmp_path / "nada"),
                            "--workspace", str(tmp_path)], capture_output=True, text=True, env=env,
                           timeout=60)
        assert p.returncode == 2 and f"processo {os.getpid()}" in p.stderr, p.stderr
    with lock.hold(tmp_path):          # solto depois do bloco
        pass
