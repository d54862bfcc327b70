raise ImportError("this plugin cannot be imported")
