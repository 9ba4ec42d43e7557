"""Onde a coleta guarda os bytes de uma turma: no disco, nunca todos na memória.

Cada arquivo aceito vai para um arquivo numa pasta temporária (`Spool`); a entrega
guarda só o caminho (`SpooledFiles`, um dicionário nome -> bytes que lê do disco
quando alguém pede um arquivo). `copy_capped` copia um arquivo aberto em pedaços,
contando os bytes, e para no teto: o tamanho que um zip declara pode mentir.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import weakref
from collections.abc import MutableMapping
from pathlib import Path
from typing import BinaryIO, Iterator

CHUNK = 1024 * 1024


class OverCap(Exception):
    """A cópia passou do teto (`read`: quantos bytes foram lidos até parar)."""

    def __init__(self, read: int):
        super().__init__(read)
        self.read = read


class Spool:
    """Uma pasta de arquivos numerados, apagada quando o objeto some (ou em `close`)."""

    def __init__(self, parent: Path | None = None):
        if parent is not None:
            Path(parent).mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix="coleta-", dir=parent))
        self._n = itertools.count()
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(self.dir), True)

    def new_path(self) -> Path:
        return self.dir / f"{next(self._n):06d}"

    def put(self, data: bytes) -> Path:
        p = self.new_path()
        p.write_bytes(data)
        return p

    def put_stream(self, fh: BinaryIO, cap: int) -> tuple[Path, int]:
        """Copia `fh` para um arquivo novo; OverCap (e nada fica) se passar de `cap` bytes."""
        p = self.new_path()
        try:
            n = copy_capped(fh, p, cap)
        except BaseException:
            p.unlink(missing_ok=True)
            raise
        return p, n

    def close(self) -> None:
        self._cleanup()


def copy_capped(fh: BinaryIO, dest: Path, cap: int) -> int:
    """Copia `fh` para `dest` em pedaços; OverCap assim que passar de `cap` bytes."""
    n = 0
    with open(dest, "wb") as out:
        while True:
            chunk = fh.read(min(CHUNK, cap + 1 - n))
            if not chunk:
                return n
            n += len(chunk)
            if n > cap:
                raise OverCap(n)
            out.write(chunk)


class SpooledFiles(MutableMapping):
    """Os arquivos de uma entrega: nome relativo -> bytes, guardados no `Spool`.

    Ler `files[nome]` lê o arquivo do disco (um de cada vez); `size` e `path` não leem nada."""

    def __init__(self, spool: Spool):
        self.spool = spool
        self._paths: dict[str, tuple[Path, int]] = {}

    def attach(self, rel: str, path: Path, size: int) -> None:
        """Guarda um arquivo que já está no spool."""
        self.pop(rel, None)
        self._paths[rel] = (path, size)

    def size(self, rel: str) -> int:
        return self._paths[rel][1]

    def path(self, rel: str) -> Path:
        return self._paths[rel][0]

    def total(self) -> int:
        return sum(n for _p, n in self._paths.values())

    def __getitem__(self, rel: str) -> bytes:
        return self._paths[rel][0].read_bytes()

    def __setitem__(self, rel: str, data: bytes) -> None:
        self.attach(rel, self.spool.put(data), len(data))

    def __delitem__(self, rel: str) -> None:
        path, _n = self._paths.pop(rel)
        path.unlink(missing_ok=True)

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __repr__(self) -> str:
        return f"SpooledFiles({ {k: n for k, (_p, n) in self._paths.items()} })"
