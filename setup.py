"""Builds a wheel from a fresh build/lib (everything else is in pyproject.toml).

setuptools copies the packages into the checkout's ``build/lib`` and never takes out
what is gone from the checkout: a prompt deleted from ``prompts/`` (or a module removed)
that an earlier build left there still shipped in the next wheel built in the tree
(``pipx install .``, ``pip install .``, ``uv build --wheel``). No configuration of
setuptools clears it; this build step does, before it copies.
"""

import shutil

from setuptools import setup
from setuptools.command.build_py import build_py


class FreshBuildPy(build_py):
    def run(self) -> None:
        if not self.editable_mode:  # (an editable install builds nothing there)
            shutil.rmtree(self.build_lib, ignore_errors=True)
        super().run()


setup(cmdclass={"build_py": FreshBuildPy})
