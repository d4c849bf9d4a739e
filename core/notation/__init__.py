"""How people write and read times, durations and words: parsing and formatting, translations."""
