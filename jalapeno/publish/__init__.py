"""The book machinery, on top of the package's layers: scenarios and parameters (:mod:`.scenarios`,
:mod:`.params`), execution and its cache (:mod:`.execute`), the generated pages (:mod:`.pages`), output
folders (:mod:`.output`), the build (:mod:`.build`), what a notebook calls to show its results
(:mod:`.notebook`) and the command line (:mod:`.cli`). Named apart from the top-level ``book/`` folder,
which holds the book's prose and configuration."""
