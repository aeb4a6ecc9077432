"""course_book: the machinery that builds and publishes *Attention, Step by Step*.

Not part of the course: no chapter imports it, and a learner in JupyterLab or Colab never runs
it. The course itself is :mod:`course_attention` (what the chapters import, and the runtime
translation its figures, explorers and checker speak Chinese with); this package turns the
chapters into the website and the reader editions, as ``d2lbook`` does for ``d2l``. Its
dependencies come with the ``[book]`` extra (``pip install -e ".[book]"``).

* :mod:`course_book.book`: the Sphinx extension (``_config.yml``) and the myst-nb mime
  renderers (plotly figures and live explorers in the static site, no CDN), and the website's
  stylesheet and MathJax loader (``static/``);
* :mod:`course_book.reader`: the reader editions, ``chapters/`` (MyST) → ``notebooks/`` (plain
  Jupyter), ``python -m course_book.reader . [zh]``;
* :mod:`course_book.course_time`: each chapter's **Time** line, computed from the page;
* :mod:`course_book.i18n`: the Chinese edition's catalogues (the prose's units, the package's
  marked strings) and the Chinese book written from them, ``python -m course_book.i18n``.
"""
