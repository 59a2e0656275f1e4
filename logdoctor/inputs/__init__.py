"""Input kinds that are not an engine's log (pasted benchmark results, host facts); see logdoctor.registry."""
