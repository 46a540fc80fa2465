"""The contract between the core and its extensions: the Plugin and Backend bases,
the contexts hooks take, the lowering specs plugins answer with, the hook caller,
and discovery by entry point. Each is its own module, imported where used
(`ppy_core.interface.plugin`, `.backend`, `.specs`, `.hooks`, `.discovery`)."""
