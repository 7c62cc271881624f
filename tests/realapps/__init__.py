"""The real-apps corpus: apps nobody here wrote, tasks on them, judged from their own data."""
