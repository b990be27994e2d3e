#!lua name=short
redis.register_function('s1', function() return 7 end)