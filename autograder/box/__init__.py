"""O processo do kernel na sandbox: `SandboxKernel` (kernel), o lançador com bubblewrap e
limites (sandbox), as caixas de cgroup (cgroup) e o molde que já importou o torch (zygote).
sandbox.py e cgroup.py também rodam como script, fora do pacote.
"""
