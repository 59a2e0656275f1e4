"""The built-in advisories: known performance issues of engine releases, one YAML file each, by engine."""
