"""Package layout only (metadata is in pyproject.toml): the repository's top-level source folders
install as subpackages of the one package ``icsim``, every sub-folder with an ``__init__.py``
included, so nothing generic lands at the top level of site-packages."""

from setuptools import find_packages, setup

SOURCES = ("model", "simulator", "routing", "traffic", "experiments", "configs")

packages = ["icsim"]
package_dir = {"icsim": "icsim"}
for root in SOURCES:
    packages.append(f"icsim.{root}")
    package_dir[f"icsim.{root}"] = root
    packages += [f"icsim.{root}.{sub}" for sub in find_packages(root)]

setup(packages=packages, package_dir=package_dir)
