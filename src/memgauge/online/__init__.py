"""In production: shadow runs (and, later, query logging and feedback)."""
