"""The application: the composition root (`Host`), runs, dev mode, inventory and the host's answers to
server requests.
"""
