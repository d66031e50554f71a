"""xlore."""
