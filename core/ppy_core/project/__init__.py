"""The user's project: `[tool.ppy]` configuration (`config`) and what a module's
names refer to (`scope`)."""
