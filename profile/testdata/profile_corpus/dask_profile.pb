
dasktcp://127.0.0.1:40000I{®Gáz„?b
maina.pyb
computea.py	b
maina.pyjÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ
j	jjj