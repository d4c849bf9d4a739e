"""The one build step pyproject.toml cannot say: compile the gettext catalogues.

``resources/locale/<language>/LC_MESSAGES/coven.po`` becomes ``coven_core/locale/…/coven.mo``
in the built package (a wheel), where :mod:`coven_core.notation.i18n` looks first (DESIGN §12);
a source checkout and an editable install read the ``.po`` instead. PyInstaller's spec
(``packaging/coven.spec``) calls :func:`compile_catalogs` for the bundle.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

CATALOGS = Path(__file__).resolve().parent / "resources" / "locale"


def compile_catalogs(target: Path, catalogs: Path = CATALOGS) -> list[Path]:
    """Write every language's ``.po`` under ``catalogs`` as a ``.mo`` under ``target``."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    written = []
    for source in sorted(catalogs.glob("*/LC_MESSAGES/*.po")):
        with source.open("rb") as po:
            catalog = read_po(po, locale=source.parents[1].name, domain=source.stem)
        compiled = target / source.relative_to(catalogs).with_suffix(".mo")
        compiled.parent.mkdir(parents=True, exist_ok=True)
        with compiled.open("wb") as mo:
            write_mo(mo, catalog)
        written.append(compiled)
    return written


class BuildWithCatalogs(build_py):
    """build_py, then the compiled catalogues into the package being built."""

    def run(self) -> None:
        super().run()
        if not self.editable_mode:  # an editable install reads the .po sources
            compile_catalogs(Path(self.build_lib) / "coven_core" / "locale")


if __name__ == "__main__":  # setuptools' build backend runs this file as __main__
    setup(cmdclass={"build_py": BuildWithCatalogs})
