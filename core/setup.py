"""Only what pyproject.toml cannot say: `ppy_packages.pth` goes into site-packages,
for a wheel and for an editable install alike, so `PPY_PACKAGES=a,b` switches ppy on
at every interpreter's start (worker processes too). Its one line costs a dictionary
lookup when the variable is unset."""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "ppy_packages.pth"


class BuildWithPth(build_py):
    """build_py, plus the .pth file at the top of the build (site-packages' root)."""

    def run(self) -> None:
        super().run()
        self.copy_file(str(Path(__file__).parent / PTH), str(Path(self.build_lib) / PTH))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib) / PTH)]


class EditableWithPth(editable_wheel):
    """`pip install -e`: an editable wheel keeps only its own .pth and finder of the
    build's files, so the file goes into the unpacked wheel, which it keeps whole."""

    def _run_build_commands(self, dist_name, unpacked_wheel, build_lib, tmp_dir):  # type: ignore[no-untyped-def]
        result = super()._run_build_commands(dist_name, unpacked_wheel, build_lib, tmp_dir)
        self.copy_file(str(Path(__file__).parent / PTH), str(Path(unpacked_wheel) / PTH))
        return result


setup(cmdclass={"build_py": BuildWithPth, "editable_wheel": EditableWithPth})
