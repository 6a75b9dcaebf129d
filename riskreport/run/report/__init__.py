"""One template run into one report folder: templates, parameters and plan, the kernel and its execution, the runner."""
