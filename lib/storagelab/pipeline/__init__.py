"""The pipeline wing: parameter validation, notebook execution (papermill), the HTML report, and the CLI.

It uses the published and simulated wings; they never import it.
"""

from storagelab.pipeline.layout import ProjectLayout
from storagelab.pipeline.params import ParamsError, load_params

__all__ = ["ParamsError", "ProjectLayout", "load_params"]
