"""Models: analytic laws and small simulations, one topic per module."""
