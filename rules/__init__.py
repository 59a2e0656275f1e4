"""The built-in rule set: one YAML file a rule, grouped in folders by cause."""
