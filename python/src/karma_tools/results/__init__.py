"""Results: the mini-apps' documents read, checked, grouped; archives, run rules, code versions."""
