"""Switching ppy on where people already work: the `PPY_PACKAGES` start-up hook
(`startup`, called by the core's `ppy_packages.pth`), the pytest plugin
(`pytest_plugin`, entry point `pytest11`) and the IPython extension (`ipython`,
`%load_ext ppy`). Each installs the runtime's package finder with the compiler
registered; none is imported unless it is switched on."""
