print("crash")
