#!lua name=long
-- a library long enough, and repetitive enough, that rdbcompression stores it LZF-compressed
local function hello(keys, args)
    return 'hello ' .. (args[1] or 'world') .. ' hello hello hello hello hello hello'
end
redis.register_function('hello', hello)
redis.register_function('hello2', hello)
redis.register_function('hello3', hello)