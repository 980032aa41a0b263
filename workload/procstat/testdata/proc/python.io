rchar: 1691853
wchar: 103732
syscr: 962
syscw: 33
read_bytes: 0
write_bytes: 118784
cancelled_write_bytes: 0
