"""What is read off guard reports: the report folder over many systems, tolerance sweeps,
contract selection under a risk order, timelines and confidence strata."""
