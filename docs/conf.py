# Sphinx configuration of flynn's documentation site. Built by `bash scripts/docs.sh`
# (warnings are errors, no network); see docs/_ext/flynn_reference.py for the pages
# generated from the code.
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))

project = "flynn"
author = "The flynn developers"
copyright = "The flynn developers, Apache-2.0"
release = os.environ.get("FLYNN_VERSION", "")

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
    "breathe",
    "flynn_reference",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]
templates_path = []

# Markdown: anchors for headings down to ####, so pages link to sections by their slug.
myst_heading_anchors = 4
myst_enable_extensions = ["deflist"]

# Python API: numpydoc sections; the members are listed explicitly in reference/python.rst.
autodoc_member_order = "bysource"
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# C++ API: Doxygen's XML of include/flynn (scripts/docs.sh runs Doxygen first).
breathe_projects = {"flynn": os.environ.get("FLYNN_DOXYGEN_XML", os.path.join(HERE, "..", "build", "docs", "doxygen", "xml"))}
breathe_default_project = "flynn"
breathe_default_members = ("members", "undoc-members")
breathe_show_include = True
cpp_index_common_prefix = ["flynn::"]

# The generated reference (docs/_ext/flynn_reference.py): the CLI that describes itself.
flynn_cli = os.environ.get("FLYNN_CLI", os.path.join(HERE, "..", "build", "flynn"))

html_theme = "pydata_sphinx_theme"
html_title = "flynn"
html_theme_options = {
    "show_prev_next": True,
    "navigation_depth": 3,
    "show_toc_level": 2,
}
html_static_path = []
html_show_sourcelink = False
html_show_sphinx = False
# Nothing is fetched: no intersphinx, no external images, fonts or scripts (no math
# rendering, whose MathJax would come from a CDN).
