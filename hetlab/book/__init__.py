"""The textbook: chapter views, readings (every sentence a run prints), quiz, progress, edition, CLI."""
