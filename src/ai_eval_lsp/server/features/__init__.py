"""What a user asks the server for, one module (or package) a feature: each a sibling over the
read layer (`query/`), none importing another. A reading feature's handlers get a snapshot and
reach neither the loop nor the session; an acting one's (runs, the site's runs, the pull of
diagnostics, reloading plugins) get the server."""
