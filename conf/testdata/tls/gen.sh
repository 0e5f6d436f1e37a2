#!/bin/sh
# Makes the admin server's TLS test fixtures: a CA, a server and a client
# certificate it issued (100 years), the server's key store in each
# encryption (OpenSSL 3's default PBES2/AES-256, OpenSSL 1.x's legacy
# RC2/3DES, Java 17's keytool), a trust store holding the CA as Java marks
# it, and a JKS key store (refused). Needs openssl and keytool; the files
# are committed, so tests need neither. Password: "changeit".
set -eu
days=36500
pw=changeit
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days $days -subj "/CN=bookie-index test CA"
for who in server client; do
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $who.key -out $who.csr -subj "/CN=$who"
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=%s\n' "$([ $who = server ] && echo serverAuth || echo clientAuth)" > $who.ext
  openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $who.pem -days $days -extfile $who.ext
  rm $who.csr $who.ext
done
openssl pkcs12 -export -inkey server.key -in server.pem -certfile ca.pem -name server -passout pass:$pw -out server-aes.p12
openssl pkcs12 -export -legacy -inkey server.key -in server.pem -certfile ca.pem -name server -passout pass:$pw -out server-legacy.p12
keytool -importkeystore -srckeystore server-aes.p12 -srcstoretype pkcs12 -srcstorepass $pw -destkeystore server-java.p12 -deststoretype pkcs12 -deststorepass $pw -noprompt
keytool -importkeystore -srckeystore server-aes.p12 -srcstoretype pkcs12 -srcstorepass $pw -destkeystore server.jks -deststoretype jks -deststorepass $pw -noprompt
keytool -importcert -noprompt -alias ca -file ca.pem -keystore truststore.p12 -storetype pkcs12 -storepass $pw
rm -f ca.key ca.srl server.key
openssl pkcs12 -export -nokeys -in ca.pem -passout pass:$pw -out truststore-openssl.p12   # no Java trust mark: refused
